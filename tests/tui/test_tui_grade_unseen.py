"""A grade committed without a question (the session showed pending, or a score ranked below a person's) must not
replace another person's grade logged after the screen showed the session: the write carries the line of the
latest grade event the screen showed (the engine's `seen_line`), and under the log's lock a grade since of a source
that would have asked (a person's) refuses it, nothing written, the grade given back as the draft, as when a
question's grade changed (tests/tui/test_tui_question_stale.py); a judge's score since does not (the grade goes
into force over it, as it would have). The other writer is the CLI's grading code (`Workspace.append_grade`, another
Workspace on the same folder), logged after the screen read the session and before the key (no poll: the screen's
view stays the one read). In the fixture s4 is pending and s3 is scored by its record's heuristic 0.6."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmCommit
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.support.lock_holder import LockHolder
from tests.tui.store_down import keep_toasts, toasts
from tests.tui.test_tui_question_stale import asked
from tests.tui.tui_fixture import log_lines, settle, wait_until

NOT_SEEN = "not saved: its grade changed after the screen showed it (graded elsewhere); nothing was written."


def grades(root: Path, sid: str) -> list[tuple[float | None, str]]:
    return [
        (e["base_reward"], e["grader"]) for e in log_lines(root) if e.get("type") == "grade" and e["session_id"] == sid
    ]


@pytest.fixture
def app(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> LessonCreditApp:
    keep_toasts(monkeypatch)
    return LessonCreditApp(workspace, seed=0, poll_seconds=0)


async def opened(pilot: object, sid: str) -> SessionDetailScreen:
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    app = pilot.app
    assert isinstance(app, LessonCreditApp)
    await settle(pilot)
    detail = SessionDetailScreen(app.source, sid)
    await app.push_screen(detail)
    await settle(pilot)
    return detail


@pytest.mark.parametrize(("sid", "shown"), [("s4", None), ("s3", 0.6)])
async def test_another_persons_grade_logged_after_the_screen_showed_the_session_is_not_replaced(
    app: LessonCreditApp, ws_root: Path, sid: str, shown: float | None
) -> None:
    """s4 shows pending, s3 its heuristic's 0.6: `7 c` asks nothing. erik's 0.25, logged meanwhile, was written
    over on the old code (the log ended with manual's 0.7); now the 0.7 is refused and is the draft again, and
    once the screen has read the log, `c` asks to replace erik's 0.25."""
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await opened(pilot, sid)
        assert detail.committed() == shown
        Workspace(ws_root).append_grade(sid, 0.25, grader="erik")  # the CLI's, after the screen read the session
        await pilot.press("7", "c")
        await settle(pilot)
        assert grades(ws_root, sid) == [(0.25, "erik")]
        said = [t for t in toasts(app) if "not saved" in t]
        assert said and said[0].endswith(
            f"Grade 0.7 for {sid} {NOT_SEEN} 0.7 is your draft again: c asks to replace the grade in force."
        ), said
        assert detail.draft == 0.7
        await wait_until(pilot, lambda: detail.committed() == 0.25)
        question = await asked(pilot, "c")
        assert question.question == f"Replace the grade 0.25 of {sid} with 0.7?"
        await pilot.press("y")
        await settle(pilot)
        assert grades(ws_root, sid) == [(0.25, "erik"), (0.7, "manual")]


async def test_a_judges_score_logged_after_the_screen_showed_the_session_does_not_refuse(
    app: LessonCreditApp, ws_root: Path
) -> None:
    """The judge ranks after people ([rewards] priority, default): its 0.9 logged meanwhile would have asked
    nothing, and the 0.7 goes into force over it, as it would have."""
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await opened(pilot, "s4")
        Workspace(ws_root).append_grade("s4", 0.9, grader="judge")
        await pilot.press("7", "c")
        await settle(pilot)
        assert grades(ws_root, "s4") == [(0.9, "judge"), (0.7, "manual")]
        assert not [t for t in toasts(app) if "not saved" in t], toasts(app)
        assert detail.draft is None


async def test_a_grade_asked_over_one_refused_unseen_is_refused_too(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`7 c` on pending s4 (no question), erik's 0.25 logged before it, the write waiting for the lock; `9 c`
    asks over the 0.7 as typed, `y`: both are refused (the 0.9 would replace erik's too), and the later, the 0.9,
    is the draft."""
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "600")  # the writer waits for the lock; it does not fail
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await opened(pilot, "s4")
        Workspace(ws_root).append_grade("s4", 0.25, grader="erik")
        with LockHolder(ws_root / "state" / "lesson-thompson" / "sessions.jsonl.lock") as holder:
            await pilot.press("7", "c")
            question = await asked(pilot, "9", "c")
            assert isinstance(question, ConfirmCommit)
            assert question.question == "Replace the grade 0.7 of s4 with 0.9?"
            await pilot.press("y")
            holder.release()
            await wait_until(pilot, lambda: app.writes.pending == 0)
        await settle(pilot)
        assert grades(ws_root, "s4") == [(0.25, "erik")]
        assert detail.draft == 0.9


async def test_the_dashboards_own_writes_since_the_view_do_not_refuse(app: LessonCreditApp, ws_root: Path) -> None:
    """`7 c u 5 c` on pending s4, nothing logged elsewhere: the 0.5 (no question: the undo left s4 pending as
    typed) follows the dashboard's own 0.7 and its undo, which the view never read; all three are written."""
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(pilot, "s4")
        await pilot.press("7", "c", "u", "5", "c")
        await settle(pilot)
        assert grades(ws_root, "s4") == [(0.7, "manual"), (None, "manual"), (0.5, "manual")]
        assert not [t for t in toasts(app) if "not saved" in t.lower()], toasts(app)
