"""The question before replacing a grade goes stale when another process grades the session while it is open:
`y` must not replace a grade the operator was not shown. The grade is checked when it is written (under the
log's lock, the engine's `expect_line`): the log's latest grade event on the session must be the one the
question was asked over, or this dashboard's write queued before it; else nothing is written and a warning says
why. The other writer is the CLI's grading code (`Workspace.append_grade`, another Workspace on the same
folder), between the question and the answer. s4 is pending in the fixture (tests/tui/tui_fixture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.lock_holder import LockHolder
from tests.tui.store_down import keep_toasts, toasts
from tests.tui.tui_fixture import log_lines, settle, until_asked, wait_until


def grades(root: Path) -> list[tuple[str, float | None]]:
    return [(e["session_id"], e["base_reward"]) for e in log_lines(root) if e.get("type") == "grade"]


@pytest.fixture
def app(workspace: Workspace, ws_root: Path, monkeypatch: pytest.MonkeyPatch) -> LessonCreditApp:
    """manual's 0.4 on s4, logged before the dashboard starts."""
    keep_toasts(monkeypatch)
    Workspace(ws_root).append_grade("s4", 0.4, grader="manual")
    return LessonCreditApp(workspace, seed=0, poll_seconds=0)


async def asked(pilot: Pilot[None], *keys: str) -> ConfirmCommit:
    await pilot.press(*keys)
    await until_asked(pilot)
    question = pilot.app.screen
    assert isinstance(question, ConfirmCommit)
    return question


async def open_s4(pilot: Pilot[None]) -> SessionDetailScreen:
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    await settle(pilot)
    detail = SessionDetailScreen(app.source, "s4")
    await app.push_screen(detail)
    await settle(pilot)
    return detail


async def test_a_grade_logged_elsewhere_while_the_question_is_open_is_not_replaced(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """`y` wrote the 0.7 over the 0.25 another process logged while "Replace the grade 0.4 …?" was open."""
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await open_s4(pilot)
        question = await asked(pilot, "7", "c")
        assert question.question == "Replace the grade 0.4 of s4 with 0.7?"
        Workspace(ws_root).append_grade("s4", 0.25, grader="manual")  # the CLI's grade, as the question shows
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25)]  # the 0.25 stands: the 0.7 was not written
        said = [t for t in toasts(app) if "0.7" in t and "not saved" in t.lower()]
        assert said and "changed" in said[0], toasts(app)
        assert app.writes.pending == 0 and not app.writes.can_undo("s4")  # nothing of ours to undo
        # the screen reads the log again: the next question names the grade in force now
        await wait_until(pilot, lambda: detail.committed() == 0.25)
        question = await asked(pilot, "7", "c")
        assert question.question == "Replace the grade 0.25 of s4 with 0.7?"
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25), ("s4", 0.7)]


async def test_a_grade_asked_over_the_one_queued_before_it_is_written_when_nothing_else_came(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The check lets through what the operator was shown: the grade this dashboard wrote just before
    (`7 c y 9 c y`: the 0.9 was asked over the 0.7), even once it is in the log and the view has not read it."""
    async with app.run_test(size=(120, 40)) as pilot:
        await open_s4(pilot)
        await asked(pilot, "7", "c")
        await pilot.press("y")
        question = await asked(pilot, "9", "c")
        assert question.question == "Replace the grade 0.7 of s4 with 0.9?"
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.7), ("s4", 0.9)]


async def test_a_grade_asked_over_one_refused_is_refused_too(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`7 c y 9 c y` with another process's 0.25 logged before the 0.7 is written: the 0.7 is refused, and the
    0.9, asked over the 0.7, which never was in the log, is refused too (it would replace the 0.25)."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")  # the writer waits for the lock; it does not fail
    async with app.run_test(size=(120, 40)) as pilot:
        await open_s4(pilot)
        await asked(pilot, "7", "c")
        Workspace(ws_root).append_grade("s4", 0.25, grader="manual")
        with LockHolder(ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock") as holder:
            await pilot.press("y")  # the 0.7 waits for the lock: the next question is asked over it
            question = await asked(pilot, "9", "c")
            assert question.question == "Replace the grade 0.7 of s4 with 0.9?"
            await pilot.press("y")
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25)]


async def test_a_refused_grade_comes_back_as_the_draft_with_its_note(app: LessonCreditApp, ws_root: Path) -> None:
    """The refusal said "commit again", but the draft and its note were gone: `c` answered "No draft grade to
    commit", and the note had to be typed again. The refused grade is the session's draft again, note and all."""
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await open_s4(pilot)
        question = await asked(pilot, "7", "e", *"flaky ci", "enter", "c")
        assert question.question == "Replace the grade 0.4 of s4 with 0.7?"
        Workspace(ws_root).append_grade("s4", 0.25, grader="manual")
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25)]
        said = [t for t in toasts(app) if "not saved" in t.lower()]
        assert said and said[0].endswith("0.7 is your draft again: c asks to replace the grade in force."), said
        assert detail.draft == 0.7
        await wait_until(pilot, lambda: detail.committed() == 0.25)
        question = await asked(pilot, "c")  # no grade typed again
        assert question.question == "Replace the grade 0.25 of s4 with 0.7?"
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25), ("s4", 0.7)]
        assert log_lines(ws_root)[-1].get("note") == "flaky ci"


async def test_of_two_refused_grades_the_later_one_is_the_draft(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`7 c y`, then `9 c y` while the first waits for the lock, another process's 0.25 logged before: both are
    refused. The 0.7 came back as the draft (none was open then: the 0.9 was queued), and the 0.9 found it there:
    "type 0.9 again". The later grade, what the operator meant last, is the draft, whether the writer has applied
    the 0.9 when the 0.7's refusal is read or not (it failed in CI when it had: a rule on what was still queued)."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await open_s4(pilot)
        await asked(pilot, "7", "c")
        Workspace(ws_root).append_grade("s4", 0.25, grader="manual")
        with LockHolder(ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock") as holder:
            await pilot.press("y")
            await asked(pilot, "9", "c")
            await pilot.press("y")
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert grades(ws_root) == [("s4", 0.4), ("s4", 0.25)]
        assert detail.draft == 0.9


async def test_a_refused_grade_comes_back_on_the_screen_the_operator_sees(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two screens of s4 on the stack (What-if's `:s4` opens another over it): the refused grade went to the
    hidden one, and `c` on the one shown answered "No draft grade to commit"."""
    from textual.screen import Screen

    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")
    async with app.run_test(size=(120, 40)) as pilot:
        first = await open_s4(pilot)
        await asked(pilot, "7", "c")
        Workspace(ws_root).append_grade("s4", 0.25, grader="manual")
        with LockHolder(ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock") as holder:
            await pilot.press("y")
            await app.push_screen(Screen())
            top = SessionDetailScreen(app.source, "s4")
            await app.push_screen(top)
            await pilot.pause()
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert (top.draft, first.draft) == (0.7, None)
