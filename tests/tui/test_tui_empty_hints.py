"""A new workspace (lessons, nothing logged) or one with nothing graded: Analysis and the grading queue say why
they are empty and what fills them, as the Sessions screen does ("Nothing logged yet. ..."), instead of a bare
table header (and, on Analysis, a caveat about intervals of effects there are none of)."""

from __future__ import annotations

import shutil
from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import fixed_clock, record, settle


def _text(app: LessonCreditApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def _shown(root: Path, key: str, selector: str) -> str:
    """`selector`'s text on the screen `key` opens, at 80x24, on the workspace as it is."""
    app = LessonCreditApp(Workspace(root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        return _text(app, selector)


async def test_an_empty_workspace_says_what_fills_analysis_and_the_queue(ws_root: Path) -> None:
    shutil.rmtree(ws_root / "state")  # the lessons only: nothing logged
    for size in ((80, 24), (200, 50)):
        app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("a")
            await settle(pilot)
            caveat = _text(app, "#analysis-caveat")
            assert "No session is logged yet" in caveat and "lesson-credit record" in caveat, caveat
            assert "distinguishable" not in caveat
            await pilot.press("I")
            await settle(pilot)
            summary = _text(app, "#queue-summary")
            assert "Nothing to grade: no session is logged yet" in summary, summary


async def test_sessions_with_none_graded_say_effects_need_grades(ws_root: Path) -> None:
    shutil.rmtree(ws_root / "state")
    (ws_root / "state" / "journals").mkdir(parents=True)
    (ws_root / "state" / "journals" / "p1.md").write_text("git worktree\n", encoding="utf-8")
    ws = Workspace(ws_root, clock=fixed_clock)
    record(ws, ws_root, ("p1", "p1.md", ["tools/git-worktree.md"], None, "code", "2026-03-06T10:00:00Z"))
    caveat = await _shown(ws_root, "a", "#analysis-caveat")
    assert "No session is graded yet" in caveat, caveat
    summary = await _shown(ws_root, "I", "#queue-summary")
    assert "1 session" in summary and "Nothing to grade" not in summary  # p1, pending: the queue lists it, no hint


async def test_a_queue_with_every_session_scored_says_so(ws_root: Path) -> None:
    """The fixture's sessions with every pending one graded: the oldest-first queue (pending sessions) is empty."""
    ws = Workspace(ws_root, clock=fixed_clock)
    table = ws.session_table()
    pending = [sid for sid, base in zip(table.session_ids, table.base, strict=True) if base != base]  # NaN: pending
    assert pending  # the fixture has pending sessions
    for session_id in pending:
        ws.append_grade(session_id, 0.5, grader="erik")
    summary = await _shown(ws_root, "I", "#queue-summary")
    assert "Nothing to grade: every session logged has a score." in summary, summary


async def test_graded_sessions_without_lessons_say_no_lesson_was_injected(ws_root: Path) -> None:
    """Graded sessions, none of which injected a lesson: no row to show (before: the bare header, under a caveat
    about the intervals of lessons there are none of)."""
    shutil.rmtree(ws_root / "state")
    (ws_root / "state" / "journals").mkdir(parents=True)
    ws = Workspace(ws_root, clock=fixed_clock)
    for i in range(2):
        (ws_root / "state" / "journals" / f"n{i}.md").write_text("nothing\n", encoding="utf-8")
        record(ws, ws_root, (f"n{i}", f"n{i}.md", [], 0.5, "code", f"2026-03-0{i + 1}T10:00:00Z"))
    caveat = await _shown(ws_root, "a", "#analysis-caveat")
    assert "No lesson was injected in the 2 graded sessions" in caveat, caveat


async def test_a_library_with_no_lessons_says_so_on_the_lessons_screen(ws_root: Path) -> None:
    """No lesson file and nothing logged: the Lessons screen said "Nothing logged yet", not that there are no
    lessons (what fills the table)."""
    shutil.rmtree(ws_root / "state")
    shutil.rmtree(ws_root / "lessons")
    (ws_root / "lessons").mkdir()
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        hint = _text(app, "#lessons-empty")
        assert hint.startswith("No lessons yet: lessons/ holds no lesson file."), hint
        assert "Nothing logged yet" not in hint, hint
